from diting.cli.entry import run

run()
