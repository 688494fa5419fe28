// Module `EdgePairing`: see README's architecture section.
