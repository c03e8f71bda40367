// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ENSRegistry} from "./ENSRegistry.sol";

/// The public resolver's profiles that primary names and avatars use: addr (EIP-137, and ENSIP-9's
/// by coin type), text (ENSIP-5) and name (EIP-181, for reverse records). A node's owner in the
/// registry sets its records.
contract PublicResolver {
    uint256 private constant COIN_TYPE_ETH = 60;

    ENSRegistry public immutable ens;
    mapping(bytes32 => mapping(uint256 => bytes)) private addresses;
    mapping(bytes32 => mapping(string => string)) private texts;
    mapping(bytes32 => string) private names;

    constructor(ENSRegistry registry) {
        ens = registry;
    }

    modifier authorised(bytes32 node) {
        require(ens.owner(node) == msg.sender, "not the owner");
        _;
    }

    function setAddr(bytes32 node, address a) external authorised(node) {
        addresses[node][COIN_TYPE_ETH] = abi.encodePacked(a);
    }

    function setText(bytes32 node, string calldata key, string calldata value) external authorised(node) {
        texts[node][key] = value;
    }

    function setName(bytes32 node, string calldata newName) external authorised(node) {
        names[node] = newName;
    }

    function addr(bytes32 node) external view returns (address payable) {
        bytes memory a = addresses[node][COIN_TYPE_ETH];
        if (a.length == 0) return payable(address(0));
        return payable(address(bytes20(a)));
    }

    function addr(bytes32 node, uint256 coinType) external view returns (bytes memory) {
        return addresses[node][coinType];
    }

    function text(bytes32 node, string calldata key) external view returns (string memory) {
        return texts[node][key];
    }

    function name(bytes32 node) external view returns (string memory) {
        return names[node];
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 // ERC-165
            || interfaceId == 0x3b3b57de // addr(bytes32)
            || interfaceId == 0xf1cb7e06 // addr(bytes32,uint256)
            || interfaceId == 0x59d1d43c // text(bytes32,string)
            || interfaceId == 0x691f3431; // name(bytes32)
    }
}
