// Package report writes what a run of fargatekit found: findings, the
// workloads and their Fargate placement, size and cost, and input errors.
//
// Every format is a [Writer] in [Formats], keyed by the name given to
// --format: "text" for people at a terminal, "json" for programs (a public
// contract described in docs/json-output.md), "sarif" for GitHub code
// scanning and other SARIF consumers, "junit" for CI test reports and
// "markdown" for pull-request comments.
//
// Writers only format: they never decide exit codes, colour or where the
// output goes; the command line does.
package report
