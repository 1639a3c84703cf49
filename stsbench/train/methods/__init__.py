"""Training methods: one module each (its class) and its options module (its spec); the base in :mod:`.base`.

Importing this package imports none of them: the method registry
(:data:`~stsbench.train.config.options.METHODS`) names each options module by one line, and
:func:`~stsbench.train.methods.base.build_method` loads the class the config's method names.
"""
