import sys

if sys.argv[1:2] == ["host"]:
    # `python -m bench host --op-us US --device NAME` predicts without a GPU and without
    # torch: dispatched before bench.cli, which imports torch.
    from bench.host import predict

    sys.exit(predict.main(sys.argv[2:]))

from bench.cli import main  # noqa: E402 - after the torch-free path above

sys.exit(main())
