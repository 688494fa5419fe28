// Module `EdgeGatewayApp`: see README's architecture section.
