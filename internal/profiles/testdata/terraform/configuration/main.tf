# The configuration of state.json, reduced to its blocks: where each resource is declared.

module "vpc" {
  source = "./modules/vpc"
}

resource "aws_eks_cluster" "this" {
  # arguments elided: the state holds the values
}

resource "aws_iam_role" "copied" {
  # arguments elided: the state holds the values
}

resource "aws_iam_role_policy_attachment" "copied" {
  # arguments elided: the state holds the values
}

resource "aws_iam_role" "ec2" {
  # arguments elided: the state holds the values
}

resource "aws_eks_fargate_profile" "apps" {
  # arguments elided: the state holds the values
}

resource "aws_eks_fargate_profile" "jobs" {
  # arguments elided: the state holds the values
}
