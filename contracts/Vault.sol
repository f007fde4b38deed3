// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {SafeTransfer} from "./SafeTransfer.sol";

/// @title Vault
/// @notice Holds deposited tokens (forwarders sweep into it with plain ERC-20 transfers). Only the
/// operator fixed at deployment can move funds out, one `withdraw` at a time, each with an event.
/// There is no other way out: no owner change, no upgrade, no self-destruct, no native-coin entry.
/// Each withdrawal carries the service's withdrawal id and is paid at most once, so a payout the
/// service re-sends after a crash or a lost reply can never pay twice.
contract Vault {
    address public immutable operator;

    /// @notice Withdrawal ids already paid.
    mapping(bytes32 => bool) public paid;

    event Withdrawn(bytes32 indexed id, address indexed token, address indexed to, uint256 amount);

    error NotOperator();
    error ZeroAddress();
    error AlreadyPaid(bytes32 id);

    constructor(address operator_) {
        if (operator_ == address(0)) revert ZeroAddress();
        operator = operator_;
    }

    /// @notice Pays `amount` of `token` to `to` for withdrawal `id`, once.
    function withdraw(bytes32 id, address token, address to, uint256 amount) external {
        if (msg.sender != operator) revert NotOperator();
        if (to == address(0)) revert ZeroAddress();
        if (paid[id]) revert AlreadyPaid(id);
        paid[id] = true;
        emit Withdrawn(id, token, to, amount);
        SafeTransfer.safeTransfer(token, to, amount);
    }
}
