"""The inference engine: the driver over an algorithm's explicit state (:mod:`.engine`),
online (stochastic) passes (:mod:`.online`) and the sharded schemes' driver (:mod:`.sharded`)."""
