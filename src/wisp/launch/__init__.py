"""argv → configuration, for every front end that is started with flags: the `wisp`
command (`cli/`) and the in-process SDK link (`sdk/_inprocess.py`), and the duplex session
either of them opens. Import-light: it runs before the first frame.

Nothing here starts a front end; `cli/` picks one.
"""
