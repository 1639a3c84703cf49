"""SimCSE / ESimCSE training: ``train(make_config(...))`` leaves a checkpoint ``stsbench run`` evaluates."""
