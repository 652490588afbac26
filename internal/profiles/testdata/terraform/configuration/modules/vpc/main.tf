# The network of state.json.

resource "aws_vpc" "this" {
  # arguments elided: the state holds the values
}

resource "aws_internet_gateway" "this" {
  # arguments elided: the state holds the values
}

resource "aws_nat_gateway" "this" {
  # arguments elided: the state holds the values
}

resource "aws_route_table" "isolated" {
  # arguments elided: the state holds the values
}

resource "aws_route_table" "private" {
  # arguments elided: the state holds the values
}

resource "aws_route_table" "public" {
  # arguments elided: the state holds the values
}

resource "aws_route_table_association" "isolated" {
  # arguments elided: the state holds the values
}

resource "aws_route_table_association" "private" {
  # arguments elided: the state holds the values
}

resource "aws_route_table_association" "public" {
  # arguments elided: the state holds the values
}

resource "aws_subnet" "isolated" {
  # arguments elided: the state holds the values
}

resource "aws_subnet" "private" {
  # arguments elided: the state holds the values
}

resource "aws_subnet" "public" {
  # arguments elided: the state holds the values
}
