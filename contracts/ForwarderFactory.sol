// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {DepositForwarder} from "./DepositForwarder.sol";

/// @title ForwarderFactory
/// @notice Deploys per-user `DepositForwarder`s with CREATE2 and sweeps them into the vault.
/// A user's deposit address is the forwarder address for salt = bytes32(uint256(uint160(wallet))):
///   address = keccak256(0xff ++ factory ++ salt ++ initCodeHash)[12:]
///   initCodeHash = keccak256(DepositForwarder.creationCode ++ abi.encode(vault))
/// so it can be computed off-chain and receives funds before any contract exists there.
/// Everything here is permissionless: the forwarders can only ever pay the vault.
contract ForwarderFactory {
    address public immutable vault;
    bytes32 public immutable initCodeHash;

    event ForwarderDeployed(bytes32 indexed salt, address forwarder);
    event Swept(address indexed wallet, address indexed token, address forwarder, uint256 amount);

    error ZeroAddress();

    constructor(address vault_) {
        if (vault_ == address(0)) revert ZeroAddress();
        vault = vault_;
        initCodeHash = keccak256(abi.encodePacked(type(DepositForwarder).creationCode, abi.encode(vault_)));
    }

    /// @notice The salt of `wallet`'s forwarder.
    function saltOf(address wallet) public pure returns (bytes32) {
        return bytes32(uint256(uint160(wallet)));
    }

    /// @notice The CREATE2 address of the forwarder for `salt` (deployed or not).
    function addressOfSalt(bytes32 salt) public view returns (address) {
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCodeHash)))));
    }

    /// @notice `wallet`'s deposit address (deployed or not).
    function addressOf(address wallet) external view returns (address) {
        return addressOfSalt(saltOf(wallet));
    }

    /// @notice Deploys the forwarder for `salt` unless it exists; returns its address either way.
    function deploy(bytes32 salt) public returns (address forwarder) {
        forwarder = addressOfSalt(salt);
        if (forwarder.code.length == 0) {
            address deployed = address(new DepositForwarder{salt: salt}(vault));
            // Unreachable unless the init-code hash were wrong; checked all the same.
            assert(deployed == forwarder);
            emit ForwarderDeployed(salt, forwarder);
        }
    }

    /// @notice Deploys `wallet`'s forwarder if needed and sweeps its whole `token` balance into the vault.
    function sweep(address wallet, address token) external returns (uint256 amount) {
        address forwarder = deploy(saltOf(wallet));
        amount = DepositForwarder(forwarder).sweep(token);
        emit Swept(wallet, token, forwarder, amount);
    }
}
