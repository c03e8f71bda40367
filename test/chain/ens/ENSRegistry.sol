// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// The ENS registry (EIP-137) as far as resolution needs it: owners and resolvers of nodes, the
/// root owned by whoever deploys it.
contract ENSRegistry {
    struct Record {
        address owner;
        address resolver;
    }

    mapping(bytes32 => Record) private records;

    event NewOwner(bytes32 indexed node, bytes32 indexed label, address owner);
    event NewResolver(bytes32 indexed node, address resolver);

    constructor() {
        records[bytes32(0)].owner = msg.sender;
    }

    modifier authorised(bytes32 node) {
        require(records[node].owner == msg.sender, "not the owner");
        _;
    }

    function owner(bytes32 node) external view returns (address) {
        return records[node].owner;
    }

    function resolver(bytes32 node) external view returns (address) {
        return records[node].resolver;
    }

    function setSubnodeOwner(bytes32 node, bytes32 label, address newOwner) public authorised(node) returns (bytes32 subnode) {
        subnode = keccak256(abi.encodePacked(node, label));
        records[subnode].owner = newOwner;
        emit NewOwner(node, label, newOwner);
    }

    function setResolver(bytes32 node, address newResolver) external authorised(node) {
        records[node].resolver = newResolver;
        emit NewResolver(node, newResolver);
    }
}
