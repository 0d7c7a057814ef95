"""The sandbox's programs that run inside the scoring runtime or a container.

``zygote`` (our sandbox's process roles, under the runtime's interpreter), ``container_runner``
(one program per ``exec`` in a container of our image) and ``tail_runner`` (the last bytes of a
program's output in a foreign sandbox). Standard library only; shipped by ``scievals.shipped``.
The harness imports them too, for the constants and framing both sides share.
"""
