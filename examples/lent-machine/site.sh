# sourced by the lent-machine scripts: puts the carried packages (.whl/site.tar.xz, which
# wheels.sh packs) on PYTHONPATH. Installed and packed with xz they take half the wheels' size,
# which keeps the tree and .whl under the 64 MiB a call carries.
mkdir -p /tmp/site && tar xJf .whl/site.tar.xz -C /tmp/site && export PYTHONPATH=/tmp/site
