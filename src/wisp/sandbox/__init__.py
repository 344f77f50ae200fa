"""The OS sandbox for the commands the model runs (bubblewrap, or Landlock as a fallback).

Above: the Bash tool and the permission judge, which ask whether a call runs sandboxed and
how to launch it. Below: the kernel (namespaces, mounts, Landlock, rlimits, cgroups).
`docs/sandbox.md` describes what it holds and what it does not.
"""
