// Module `EdgeReplication`: see README's architecture section.
