"""The ``admcuda`` command line: ``tool`` (what every subcommand shares: parser, exit
codes, number parsing, one-line failures) and a module per subcommand."""
