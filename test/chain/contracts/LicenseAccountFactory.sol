// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {LicenseAccount} from "./LicenseAccount.sol";

/// Deploys LicenseAccounts with CREATE2, so an account's address is known before it exists
/// (the counterfactual accounts that ERC-6492 signatures are for).
contract LicenseAccountFactory {
    event Deployed(address indexed account, address indexed owner, bytes32 salt);

    function deploy(address owner, bytes32 salt) external returns (address account) {
        account = addressOf(owner, salt);
        if (account.code.length > 0) return account;
        LicenseAccount created = new LicenseAccount{salt: salt}(owner);
        require(address(created) == account, "unexpected CREATE2 address");
        emit Deployed(account, owner, salt);
    }

    function addressOf(address owner, bytes32 salt) public view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(LicenseAccount).creationCode, abi.encode(owner)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCodeHash)))));
    }
}
