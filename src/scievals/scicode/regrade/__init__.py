"""``scievals regrade``: completions another harness already ran, graded by ``scicode.grade``
under the official rule and compared with the scores that harness recorded.

One job per module: ``official_folder`` reads the official SciCode harness's generated-code
folder and verdict files, ``run`` grades each run's answers, ``compare`` sets the source's scores
against the official rule's, ``cli`` is the command.
"""
