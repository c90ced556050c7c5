# Shipmoor Claim Check: a small image holding the static `shipmoor` binary and what it needs at
# run time. Built FROM scratch, so nothing is pulled from a registry. One file for both images
# (book: container.md): the full one (ROOTFS=target/image/rootfs) and the verifier
# (ROOTFS=target/image/rootfs-verifier: the verifier build of `shipmoor`, no Docker action
# entrypoint).
#
# Do not build this file by hand from a bare checkout: `scripts/build-image.sh` first builds the
# static binary and stages the root filesystem in target/image/rootfs/, then runs
#   buildah --storage-driver vfs bud -f Dockerfile -t TAG .
# from the repository's root (`.dockerignore` keeps everything else out of the build context).
# `docker build .` works the same way once the root filesystem is staged.
#
# What the staged root filesystem holds (see scripts/build-image.sh):
#   /usr/local/bin/shipmoor            the static binary (glibc, crt-static; no dynamic loader)
#   /usr/local/bin/shipmoor-action     container/entrypoint.sh, the Docker action's entrypoint
#   /usr/bin/git                       Debian's git, with the shared libraries it links
#   /lib/x86_64-linux-gnu/*, /lib64/ld-linux-x86-64.so.2   (git's and busybox's libraries)
#   /bin/busybox + applet links        Debian's dynamic busybox (it shares git's libc): /bin/sh
#                                      for the entrypoint and for junit-command runners, and the
#                                      usual small tools
#   /etc/gitconfig                     safe.directory = * (workspaces mounted from another uid)
#   /etc/ssl/certs/ca-certificates.crt for keyless signing (Fulcio, Rekor, the OIDC token)
#   /etc/passwd, /etc/group, /etc/nsswitch.conf, /root, /tmp (1777)
#
# It holds no language toolchain: `claim-check` runs the floor with the runners the acceptance set
# names, so in this image only `junit-command` runners written in shell can run. For cargo,
# pytest, go or node projects, copy the binary into an image that has the toolchain:
#   COPY --from=ghcr.io/shipmoor/claim-check:v1 /usr/local/bin/shipmoor /usr/local/bin/shipmoor
FROM scratch

ARG ROOTFS=target/image/rootfs
ARG VERSION=dev
ARG REVISION=unknown
ARG TITLE="Shipmoor Claim Check"
ARG DESCRIPTION="Decide, criterion by criterion, whether a change meets its acceptance criteria; replay and verify its attestations offline"

COPY ${ROOTFS}/ /

ENV PATH=/usr/local/bin:/usr/bin:/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt

LABEL org.opencontainers.image.title="${TITLE}" \
      org.opencontainers.image.description="${DESCRIPTION}" \
      org.opencontainers.image.source="https://github.com/shipmoor/claim-check" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"

ENTRYPOINT ["shipmoor"]
CMD ["--help"]
