"""The worked example of a family folder: the Dirichlet-multinomial mixture (GSDMM; Yin &
Wang, KDD 2014), shaped as a folder of src/topiclink/families would be (algorithm,
estimator, protocol); see docs/adding-a-model.md."""
