"""The sandbox's programs that run inside the scoring runtime or a container, and the modules
they share.

Programs: ``zygote`` (our sandbox's processes: the warm server, supervisors, each execution's
init and program), ``container_runner`` (one program per ``exec`` in a container of our image),
``probes`` (what the host allows, asked once by the harness) and ``tail_runner`` (the last bytes
of a program's output in a foreign sandbox). Shared modules: ``kernel`` (libc, mounts,
namespaces, seccomp, the private root), ``framing`` (the messages), ``groups`` (cgroups and
the kernel's counters), ``verdict`` (the one rule for how a program ended, its limit notes and
rlimit set) and ``inplace`` (a Python program run in place). Standard library only; shipped
by ``scievals.shipped``, which assembles a program with the modules it imports. The harness
imports them too, for the constants, mounts and framing both sides share.
"""
