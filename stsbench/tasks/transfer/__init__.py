"""SentEval transfer tasks; importing this package imports none of its modules.

The probe (:mod:`.classifier`), its validation (:mod:`.validation`), the task kinds (:mod:`.tasks`) and the seven
tasks (:mod:`.builtin`).
"""
