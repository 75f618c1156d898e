"""What the relation tasks (FewRel, Wiki80) share: the relation instance (:mod:`pelt.tasks.relation.data`,
pure Python), the encoder that marks and reads it (:mod:`pelt.tasks.relation.encoder`, torch), and
here the hyper-parameters both kinds' tasks take (their registry entries' ``hyperparameters``)."""

# What the encoder and the optimiser take from a fine-tuning task's config (pelt.eval.settings).
FINETUNING_HYPERPARAMETERS = ("batch_size", "lr", "warmup", "max_length", "missing", "markers", "read_at", "precision")
