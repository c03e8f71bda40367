// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A vehicle contract for the tests, as the platform's is to Keyfob: an ERC-721 whose owner grants
/// privileges per token to other addresses (EIP-5496 style, the platform's MultiPrivilege), with a
/// version per token that a transfer bumps, so that privileges an earlier owner granted lapse.
/// Only what Keyfob reads and watches is here: ownerOf, hasPrivilege, Transfer and PrivilegeSet.
contract Vehicle {
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event PrivilegeSet(uint256 indexed tokenId, uint256 version, uint256 indexed privId, address indexed user, uint256 expires);

    mapping(uint256 => address) private owners;
    // tokenId => version
    mapping(uint256 => uint256) public tokenIdToVersion;
    // tokenId => version => privId => user => expires at
    mapping(uint256 => mapping(uint256 => mapping(uint256 => mapping(address => uint256)))) public privilegeEntry;

    function mint(address to, uint256 tokenId) external {
        require(to != address(0) && owners[tokenId] == address(0), "cannot mint");
        owners[tokenId] = to;
        emit Transfer(address(0), to, tokenId);
    }

    function ownerOf(uint256 tokenId) public view returns (address) {
        address owner = owners[tokenId];
        require(owner != address(0), "ERC721: invalid token ID");
        return owner;
    }

    function transferFrom(address from, address to, uint256 tokenId) external {
        require(ownerOf(tokenId) == from && msg.sender == from && to != address(0), "not the owner");
        owners[tokenId] = to;
        tokenIdToVersion[tokenId]++;
        emit Transfer(from, to, tokenId);
    }

    function setPrivilege(uint256 tokenId, uint256 privId, address user, uint256 expires) external {
        require(msg.sender == ownerOf(tokenId), "only the owner");
        uint256 version = tokenIdToVersion[tokenId];
        privilegeEntry[tokenId][version][privId][user] = expires;
        emit PrivilegeSet(tokenId, version, privId, user, expires);
    }

    function hasPrivilege(uint256 tokenId, uint256 privId, address user) external view returns (bool) {
        if (ownerOf(tokenId) == user) return true;
        return privilegeEntry[tokenId][tokenIdToVersion[tokenId]][privId][user] >= block.timestamp;
    }
}
