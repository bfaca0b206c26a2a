"""One module per network OS: what each switch operating system renders."""
