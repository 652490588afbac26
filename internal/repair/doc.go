// Package repair brings back to Fargate the workloads whose pods drifted off
// it (scan's LV001): it restarts them one at a time as `kubectl rollout
// restart` does, waits for each rollout, and checks that the new pods run on
// Fargate. `fargatekit fix drift` wires it to the command line.
package repair
