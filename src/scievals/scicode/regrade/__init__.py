"""``scievals regrade``: completions another harness already ran, graded by ``scicode.grade``
under the official rule and compared with the scores that harness recorded; with ``--verify``, a
scievals log re-graded by its own scorer and checked against what it claims.

One job per module: ``official_folder`` reads the official SciCode harness's generated-code
folder and verdict files, ``run`` grades each run's answers, ``compare`` sets the source's scores
against the official rule's; ``scievals_log`` reads a scievals log and each sample's answers,
``verify`` re-grades it, ``differences`` sets its step verdicts and metrics against the
re-grade's, ``protocol_check`` its protocol against this install's; ``cli`` is the command.
"""
