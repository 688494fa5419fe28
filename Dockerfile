# Placeholder until the container issue: the real multi-stage image is built there.
FROM debian:bookworm-slim
