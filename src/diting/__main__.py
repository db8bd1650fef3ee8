from diting.cli.main import run

run()
