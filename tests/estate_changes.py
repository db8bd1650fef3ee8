"""The second commit of the diff fixture: the mandated changes (issue 8) applied to a checkout of the
fixture estate. Each edit names the change class the diff must report for it."""

from __future__ import annotations

from pathlib import Path


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


STOCK_IMPL = "stock/stock-service/src/main/java/com/jd/trade/stock/provider/StockReserveServiceImpl.java"
RELEASE = '''    @Override
    public void release(String orderNo) {
        reserveGuard.forget(orderNo);
        stockChangedNotifier.released(orderNo);
    }
'''


def apply(root: Path) -> None:
    """Edit the checkout at ``root`` in place."""
    # 1. a method moved without edits (EVIDENCE_MOVED): release() goes above the reserve overloads
    _edit(root, STOCK_IMPL, "\n" + RELEASE, "\n")
    _edit(root, STOCK_IMPL, "    @Override\n    public boolean reserve(String orderNo, List<Long> skuIds) {",
          RELEASE + "\n    @Override\n    public boolean reserve(String orderNo, List<Long> skuIds) {")
    # 2. an overload added to the provided interface (CONTRACT_ADDED)
    _edit(root, "stock/stock-export/src/main/java/com/jd/trade/stock/api/StockReserveService.java",
          "    void release(String orderNo);\n", "    void release(String orderNo);\n\n"
          "    void release(String orderNo, String reason);\n")
    _edit(root, STOCK_IMPL, "public class StockReserveServiceImpl implements StockReserveService {\n",
          "public class StockReserveServiceImpl implements StockReserveService {\n\n"
          "    @Override\n    public void release(String orderNo, String reason) {\n        release(orderNo);\n    }\n")
    # 3. a consumer call removed (CONSUMER_REMOVED): order-center no longer releases stock
    _edit(root, "order/order-service/src/main/java/com/jd/trade/order/service/OrderSubmitService.java",
          "        stockReserveService.release(orderNo);\n", "")
    # 4. a topic renamed through a constant in another file (TOPIC_PUBLISH_CHANGED in order-center)
    _edit(root, "trade-common/src/main/java/com/jd/trade/common/TradeConstants.java",
          'String ORDER_CREATED_TOPIC = TOPIC_PREFIX + "order_created";',
          'String ORDER_CREATED_TOPIC = TOPIC_PREFIX + "order_placed";')
    _edit(root, "trade-common/src/test/java/com/jd/trade/common/TradeConstantsTest.java",
          '"trade_order_created"', '"trade_order_placed"')
    # 5. a config value changed with no code change (CONFIG_CHANGED in payment-center)
    _edit(root, "payment/payment-service/src/main/resources/application.yml",
          "    default: unionpay\n", "    default: alipay\n")
    # 6. a class renamed (a removal plus an addition, with a rename candidate)
    old = root / "stock/stock-service/src/main/java/com/jd/trade/stock/cache/ReserveGuard.java"
    text = old.read_text(encoding="utf-8").replace("ReserveGuard", "ReserveLedger")
    old.unlink()
    (old.parent / "ReserveLedger.java").write_text(text, encoding="utf-8")
    _edit(root, STOCK_IMPL, "import com.jd.trade.stock.cache.ReserveGuard;", "import com.jd.trade.stock.cache.ReserveLedger;")
    _edit(root, STOCK_IMPL, "private ReserveGuard reserveGuard;", "private ReserveLedger reserveGuard;")
    # 7. a resolution status changed (RESOLUTION_STATUS_CHANGED in fulfillment): the Feign client's
    #    name now comes from a property no file defines
    _edit(root, "fulfillment/fulfillment-core/src/main/java/com/jd/trade/fulfillment/client/StockClient.java",
          '@FeignClient(name = "stock-center", path = "/stock")', '@FeignClient(name = "${stock.service-name}", path = "/stock")')


def commit(root: Path) -> str:
    """Commit the edited checkout as the fixture commits are made (fixed author, committer and
    date): the same SHA on every machine. Returns it."""
    from diting.demo import _git
    _git(["add", "-A"], root)
    _git(["commit", "-q", "--no-gpg-sign", "--no-verify", "-m", "the mandated changes"], root)
    return _git(["rev-parse", "HEAD"], root)
