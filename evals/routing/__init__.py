"""Routing evaluation: do the tools' names and descriptions let a search find the right tool?"""
