"""TensorRT: the compatibility lowering, the static parser lint, and the engine.

Only `engine` imports `tensorrt`, and only when a build is asked for; every other
module here runs, and is tested, without it.
"""
