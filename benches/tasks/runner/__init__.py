"""The task suite's runner: an ACP client that plays the editor for any agent (see ../run.py)."""
