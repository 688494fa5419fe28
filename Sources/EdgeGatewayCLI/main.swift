print("edge-gateway")
