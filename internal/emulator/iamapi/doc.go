// Package iamapi is the part of the IAM API the fargatekit emulator serves
// (GetRole and ListAttachedRolePolicies) over the roles of the
// configuration (clusterconfig.Config.Roles: those of its iam section, and
// the pod execution role of its profiles); in IAM's query protocol (API
// version 2010-05-08: a form-encoded POST naming the Action, answered in
// XML), so that aws-sdk-go-v2/service/iam and `aws iam ... --endpoint-url`
// work against it unchanged. As IAM does, GetRole returns the trust policy
// URL-encoded. It shares the emulator's AWS endpoint with the EKS and EC2
// APIs: [IsRequest] tells an IAM request from the others, by the service
// of its SigV4 credential scope, else by its Version. Any credentials are
// accepted; requests are not signature-checked. The roles cannot be
// changed through the API.
//
// A [Server] also tells the EKS API the trust policy of a pod execution
// role ([Server.TrustPolicy]), which CreateFargateProfile checks.
package iamapi
