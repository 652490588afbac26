package eks

// NodegroupLabel is the label EKS puts on the nodes of a managed node group,
// with the group's name.
const NodegroupLabel = "eks.amazonaws.com/nodegroup"
