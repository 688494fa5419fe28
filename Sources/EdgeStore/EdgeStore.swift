// Module `EdgeStore`: see README's architecture section.
