// Module `BLIPConnection`: see README's architecture section.
