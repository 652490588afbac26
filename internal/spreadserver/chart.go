package spreadserver

// The release `spread install --emulator` makes of the chart.
const (
	ReleaseName      = "fargatekit-spread"
	ReleaseNamespace = "fargatekit-spread"
)
