// The loopback stand-in for a Service in front of two gpuadmit replicas (tests/e2e/faults.sh). Standard
// library only, so it builds without the module proxy.
module gpuadmit.io/e2e/balancer

go 1.22
