"""SentEval transfer tasks; importing this package imports none of its modules.

The probe (:mod:`.classifier`), its validation (:mod:`.validation`), the task kinds and the seven
tasks (:mod:`.tasks`).
"""
