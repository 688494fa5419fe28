// Module `ReplicationProtocol`: see README's architecture section.
