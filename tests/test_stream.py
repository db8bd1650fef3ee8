"""Spring Cloud Stream, JMS and parameter-getter wrappers end to end: a small estate of services scanned,
built into a graph, and its cross-service MQ edges (probes/stream.py, rules/spring-cloud-stream.yaml,
rules/jms.yaml, probes/wrappers.py, graph/align.py)."""

from __future__ import annotations

from diting.graph.store import build
from diting.graph.query import query
from tests.conftest import boot_module, pom
from tests.stagekit import scan_memory


def _deps(*artifacts: str) -> str:
    return "<dependencies>" + "".join(f"<dependency><groupId>org.springframework.cloud</groupId><artifactId>{a}"
                                      "</artifactId></dependency>" for a in artifacts) + "</dependencies>"


def _service(name: str, binder: str, files: dict[str, str]) -> dict[str, str]:
    return boot_module(name, _deps(binder), files)


ESTATE = {
    "pom.xml": pom("shop-parent", parent=None, packaging="pom",
                   body="<modules><module>stock-source</module><module>stock-sink</module>"
                        "<module>audit-bridge</module><module>audit-sink</module><module>refund-jms</module>"
                        "<module>refund-listener</module></modules>"),
    # RabbitMQ binder, functional Supplier → exchange "stock", routing key "stock"
    **_service("stock-source", "spring-cloud-starter-stream-rabbit", {
        "src/main/resources/application.yml": "spring.cloud.stream.bindings.restock-out-0.destination: stock\n",
        "src/main/java/com/example/PKG/Functions.java": """package com.example.PKG;
@org.springframework.context.annotation.Configuration
public class Functions {
    @org.springframework.context.annotation.Bean
    public java.util.function.Supplier<String> restock() { return () -> "sku"; }
}
"""}),
    # RabbitMQ binder, annotation model: Sink listener in group "trade" → queue stock.trade bound with '#'
    **_service("stock-sink", "spring-cloud-starter-stream-rabbit", {
        "src/main/resources/application.properties": "spring.cloud.stream.bindings.input.destination=stock\n"
                                                     "spring.cloud.stream.bindings.input.group=trade\n",
        "src/main/java/com/example/PKG/StockListener.java": """package com.example.PKG;
import org.springframework.cloud.stream.annotation.*;
import org.springframework.cloud.stream.messaging.Sink;
@EnableBinding(Sink.class)
public class StockListener {
    @StreamListener(Sink.INPUT) public void onStock(String sku) { }
}
"""}),
    # Kafka binder: StreamBridge.send to a binding whose destination is configured
    **_service("audit-bridge", "spring-cloud-stream-binder-kafka", {
        "src/main/resources/application.yml": "spring.cloud.stream.bindings.audit-out-0.destination: audit-log\n",
        "src/main/java/com/example/PKG/Auditor.java": """package com.example.PKG;
@org.springframework.stereotype.Service
public class Auditor {
    @javax.annotation.Resource private org.springframework.cloud.stream.function.StreamBridge bridge;
    public void audit(String line) { bridge.send("audit-out-0", line); }
}
"""}),
    # Kafka binder: the only functional Consumer (no definition) consumes audit-log
    **_service("audit-sink", "spring-cloud-stream-binder-kafka", {
        "src/main/resources/application.yml": "spring.cloud.stream.bindings.store-in-0.destination: audit-log\n",
        "src/main/java/com/example/PKG/Functions.java": """package com.example.PKG;
@org.springframework.context.annotation.Configuration
public class Functions {
    @org.springframework.context.annotation.Bean
    public java.util.function.Consumer<String> store() { return s -> { }; }
}
"""}),
    # JMS through a bean wrapper whose topic is an enum parameter's (Lombok) getter
    **_service("refund-jms", "spring-boot-starter-activemq", {
        "src/main/java/com/example/PKG/Queue.java": """package com.example.PKG;
@lombok.Getter @lombok.AllArgsConstructor
public enum Queue { REFUND_DONE("refund.done"), REFUND_FAILED("refund.failed"); private final String destination; }
""",
        "src/main/java/com/example/PKG/JmsSender.java": """package com.example.PKG;
@org.springframework.stereotype.Component
public class JmsSender {
    @org.springframework.beans.factory.annotation.Autowired private org.springframework.jms.core.JmsTemplate jmsTemplate;
    public void send(Queue queue, Object body) { jmsTemplate.convertAndSend(queue.getDestination(), body); }
}
""",
        "src/main/java/com/example/PKG/RefundService.java": """package com.example.PKG;
@org.springframework.stereotype.Service
public class RefundService {
    @org.springframework.beans.factory.annotation.Autowired private JmsSender sender;
    public void done(String id) { sender.send(Queue.REFUND_DONE, id); }
}
"""}),
    **_service("refund-listener", "spring-boot-starter-activemq", {
        "src/main/java/com/example/PKG/RefundListener.java": """package com.example.PKG;
@org.springframework.stereotype.Component
public class RefundListener {
    @org.springframework.jms.annotation.JmsListener(destination = "refund.done") public void on(String id) { }
}
""",
        "src/main/java/com/example/PKG/LegacyListener.java": """package com.example.PKG;
@org.springframework.stereotype.Component
public class LegacyListener implements javax.jms.MessageListener { public void onMessage(javax.jms.Message m) { } }
"""}),
}


def _graph(tmp_path, estate: dict[str, str]):
    """The graph database of ``estate`` scanned at its one commit."""
    out = tmp_path / "ir"
    scan_memory(estate, out)
    db = tmp_path / "g.duckdb"
    build(db, [out])
    return db


def test_stream_jms_and_getter_wrappers_align_across_services(tmp_path):
    db = _graph(tmp_path, ESTATE)
    rows = query(db, "SELECT src_service, dst_service, urn, resolution_status, match_basis FROM alignment "
                     "WHERE edge_kind = 'MQ' AND src_service IS NOT NULL AND dst_service IS NOT NULL "
                     "ORDER BY ALL")[1]
    assert [tuple(r) for r in rows] == [
        ("audit-bridge", "audit-sink", "kafka://audit-log", "RESOLVED", "TOPIC"),
        ("refund-jms", "refund-listener", "jms://refund.done", "RESOLVED", "TOPIC"),
        ("stock-source", "stock-sink", "amqp://stock/stock", "RESOLVED", "RABBIT_BINDING"),
    ]
    hints = query(db, "SELECT DISTINCT message FROM diagnostics WHERE code = 'ENTRY_UNRESOLVED'")[1]
    assert len(hints) == 1 and "LegacyListener" in hints[0][0] and "javax.jms.MessageListener" in hints[0][0]


SHAPES = {
    "pom.xml": pom("price-parent", parent=None, packaging="pom",
                   body="<modules><module>price-publisher</module><module>price-ledger</module>"
                        "<module>price-streams</module></modules>"),
    # a binding interface injected through a constructor that keeps its channel in a field; a bridge
    # reached through ObjectProvider.ifAvailable sends inside the lambda
    **_service("price-publisher", "spring-cloud-stream-binder-kafka", {
        "src/main/resources/application.yml": "spring.cloud.stream.bindings:\n  prices-out: {destination: prices}\n"
                                              "  alerts-out-0: {destination: alerts}\n",
        "src/main/java/com/example/PKG/PriceChannels.java": """package com.example.PKG;
public interface PriceChannels {
    @org.springframework.cloud.stream.annotation.Output("prices-out") org.springframework.messaging.MessageChannel pricesOut();
}
""",
        "src/main/java/com/example/PKG/Bindings.java": """package com.example.PKG;
@org.springframework.cloud.stream.annotation.EnableBinding(PriceChannels.class)
public class Bindings { }
""",
        "src/main/java/com/example/PKG/PriceService.java": """package com.example.PKG;
@org.springframework.stereotype.Service
public class PriceService {
    private final org.springframework.messaging.MessageChannel out;
    public PriceService(PriceChannels channels) { this.out = channels.pricesOut(); }
    public void publish(String p) { out.send(org.springframework.messaging.support.MessageBuilder.withPayload(p).build()); }
}
""",
        "src/main/java/com/example/PKG/Alerts.java": """package com.example.PKG;
import org.springframework.cloud.stream.function.StreamBridge;
@org.springframework.stereotype.Component
public class Alerts {
    private final org.springframework.beans.factory.ObjectProvider<StreamBridge> bridges;
    public Alerts(org.springframework.beans.factory.ObjectProvider<StreamBridge> bridges) { this.bridges = bridges; }
    public void raise(String a) { bridges.ifAvailable(bridge -> bridge.send("alerts-out-0", a)); }
}
"""}),
    # a functional component class named by the definition
    **_service("price-ledger", "spring-cloud-stream-binder-kafka", {
        "src/main/resources/application.yml": "spring.cloud.function.definition: ledger\n"
                                              "spring.cloud.stream.bindings.ledger-in-0.destination: prices\n",
        "src/main/java/com/example/PKG/Ledger.java": """package com.example.PKG;
@org.springframework.stereotype.Component("ledger")
class Ledger implements java.util.function.Consumer<String> { public void accept(String p) { } }
"""}),
    # a Kafka Streams DSL topology: source alerts, sink alerts-archive
    **_service("price-streams", "spring-kafka", {
        "src/main/java/com/example/PKG/Topology.java": """package com.example.PKG;
@org.springframework.stereotype.Component
public class Topology {
    @org.springframework.beans.factory.annotation.Autowired
    public void build(org.apache.kafka.streams.StreamsBuilder builder) {
        builder.<String, String>stream("alerts").mapValues(v -> v.trim()).to("alerts-archive");
    }
}
"""}),
}


def test_binding_beans_functional_components_lambda_sends_and_streams_dsl(tmp_path):
    db = _graph(tmp_path, SHAPES)
    rows = query(db, "SELECT src_service, dst_service, urn, resolution_status FROM alignment "
                     "WHERE edge_kind = 'MQ' ORDER BY ALL")[1]
    assert [tuple(r) for r in rows] == [
        ("price-publisher", "price-ledger", "kafka://prices", "RESOLVED"),
        ("price-publisher", "price-streams", "kafka://alerts", "RESOLVED"),
        ("price-streams", None, "kafka://alerts-archive", "UNRESOLVED"),
    ]
    unresolved = query(db, "SELECT message FROM diagnostics WHERE code = 'BEAN_UNRESOLVED'")[1]
    assert not [m for (m,) in unresolved if "PriceChannels" in m]
