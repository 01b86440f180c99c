"""The device descriptions TileLang programs query (tilelang.carver.arch). TileLang's carver
also recommends tile configurations (templates, the roller); tilec does not have those."""
