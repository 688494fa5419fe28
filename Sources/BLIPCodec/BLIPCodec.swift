// Module `BLIPCodec`: see README's architecture section.
