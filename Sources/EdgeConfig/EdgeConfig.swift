// Module `EdgeConfig`: see README's architecture section.
