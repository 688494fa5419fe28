// Module `SyncListener`: see README's architecture section.
