"""What the relation tasks (FewRel, Wiki80) share: the relation instance (:mod:`pelt.tasks.relation.data`,
pure Python) and the encoder that marks and reads it (:mod:`pelt.tasks.relation.encoder`, torch)."""
