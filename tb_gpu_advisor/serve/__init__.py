"""Serving: the plugin's runs, analysis cache and worker pool (service), and the files a command names
(selection). The entry points (`plugin.py`, `cli/`) sit at the package root."""
