"""TileLang's carver: the device descriptions programs query (arch), and the tile
configurations a template recommends for a device (template, roller)."""
