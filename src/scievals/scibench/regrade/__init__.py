"""``scievals regrade SOURCE`` for OpenCompass's SciBench output: its prediction files graded by
the ``opencompass``, ``faithful`` and ``robust`` scorers, and compared with its results files.

One job per module: ``bounded`` reads one untrusted JSON file within bounds, ``layout`` the
OpenCompass folder and its files, ``mapping`` finds the problem each prediction answers,
``grading`` grades through ``scievals grade scibench``'s code, ``compare`` sets the source's
scores against the official rule's, ``eval_log`` writes each run as the task's log; ``cli`` is
what the command runs. ``is_opencompass_output`` (cheap, bounded) tells the command that SOURCE
is OpenCompass output, ``regrade_opencompass`` grades it; both are on SciBench's face.
``--verify`` of a scievals SciBench log: ``own_log`` reads it and builds its task again
(``is_scibench_log`` tells the command it is one), ``sample_check`` re-grades each sample,
``protocol_check`` sets its protocol against this install's, ``verify`` is what the command runs
(``verify_scibench``, on the face).
"""
